// colvec for Node: the path of the prebuilt extension for this platform, and
// load(db) for better-sqlite3 or any driver with loadExtension(path).
"use strict";
const path = require("node:path");

// Prebuilt binaries: `${process.platform}-${process.arch}` -> the npm
// package that carries it and the file's name in that package.
const PLATFORMS = {
  "linux-x64": ["colvec-linux-x64", "colvec.so"],
  "linux-arm64": ["colvec-linux-arm64", "colvec.so"],
  "win32-x64": ["colvec-windows-x64", "colvec.dll"],
};

// Returns the absolute path of colvec's loadable extension for this
// platform. Throws an Error that names the platforms with a prebuilt
// binary when there is none for this one, or that says which package to
// install when the platform's package is missing.
function getLoadablePath() {
  const key = `${process.platform}-${process.arch}`;
  const entry = PLATFORMS[key];
  if (!entry) {
    throw new Error(
      `colvec: no prebuilt binary for ${key}; there are binaries for ` +
        `${Object.keys(PLATFORMS).join(", ")}. On other platforms build ` +
        `colvec from source and load the built file with ` +
        `db.loadExtension(path).`
    );
  }
  const [pkg, file] = entry;
  let dir;
  try {
    dir = path.dirname(require.resolve(`${pkg}/package.json`));
  } catch (e) {
    throw new Error(
      `colvec: the package ${pkg}, which holds the binary for ${key}, is ` +
        `not installed (npm installs it with colvec unless optional ` +
        `dependencies were left out): npm install ${pkg}`
    );
  }
  return path.join(dir, file);
}

// Loads colvec into database connection db: better-sqlite3's Database, or
// any object with a loadExtension(path) method (node:sqlite's DatabaseSync
// opened with allowExtension: true).
function load(db) {
  if (!db || typeof db.loadExtension !== "function") {
    throw new TypeError(
      "colvec: load(db) needs a database connection with a " +
        "loadExtension(path) method, such as better-sqlite3's Database"
    );
  }
  db.loadExtension(getLoadablePath());
}

module.exports = { getLoadablePath, load, platforms: Object.keys(PLATFORMS) };
