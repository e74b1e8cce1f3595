// colvec in the browser: SQLite with colvec compiled in (colvec-web.mjs and
// colvec-web.wasm, built by tool/browser.sh), behind a small API.
//
//   const db = await open("app.db");       // persistent where IndexedDB is
//   db.exec("CREATE VIRTUAL TABLE ...");    // -> array of row objects
//   db.exec("SELECT ... WHERE e MATCH ? AND k = 5", [JSON.stringify(q)]);
//   await db.save();                       // flush to IndexedDB
//
// Persistence: the database file (and colvec's segment folder beside it)
// lives in emscripten's IDBFS, a file system kept in memory and written to
// IndexedDB by save(); open() reads it back. Where IndexedDB is missing
// (node, some private modes) everything stays in memory and
// db.persistent is false.
import createColvecModule from "./colvec-web.mjs";

// Runs FS.syncfs in direction `populate` (true: IndexedDB -> memory).
function syncfs(M, populate) {
  return new Promise((resolve, reject) =>
    M.FS.syncfs(populate, (err) => (err ? reject(err) : resolve()))
  );
}

// Opens (creating it when new) database `name`. Options: persist (default
// true: keep it in IndexedDB where the browser has it).
export async function open(name = "colvec.db", { persist = true } = {}) {
  const M = await createColvecModule();
  let dir = "/memory";
  let persistent = false;
  M.FS.mkdir("/memory");
  if (persist && typeof indexedDB !== "undefined") {
    M.FS.mkdir("/persist");
    M.FS.mount(M.FS.filesystems.IDBFS, {}, "/persist");
    await syncfs(M, true);
    dir = "/persist";
    persistent = true;
  }
  const webOpen = M.cwrap("webOpen", "number", ["string"]);
  const webExec = M.cwrap("webExec", "string", ["number", "string", "string"]);
  const webClose = M.cwrap("webClose", null, ["number"]);
  const h = webOpen(`${dir}/${name}`);
  if (!h) throw new Error(`colvec: cannot open ${name}`);
  return {
    persistent,
    // Runs SQL (one or more statements; params bind to the last one) and
    // returns the last statement's rows as objects. Throws on an error.
    exec(sql, params = null) {
      const r = JSON.parse(webExec(h, sql, params ? JSON.stringify(params) : ""));
      if (r.error) throw new Error(r.error);
      return r.rows.map((row) =>
        Object.fromEntries(r.columns.map((c, i) => [c, row[i]]))
      );
    },
    // Writes the database to IndexedDB (a no-op when not persistent).
    async save() {
      if (persistent) await syncfs(M, false);
    },
    // Closes the connection.
    close() {
      webClose(h);
    },
  };
}
