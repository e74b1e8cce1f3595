// serve.mjs — a static file server for the browser test, on 127.0.0.1 at a
// free port (printed on the first line of stdout); it stops by itself
// after SECONDS (default 600).
// Usage: node tool/browser/serve.mjs FOLDER [SECONDS]
import http from "node:http";
import { readFile } from "node:fs/promises";
import path from "node:path";

const root = path.resolve(process.argv[2]);
const types = {
  ".html": "text/html", ".mjs": "text/javascript", ".js": "text/javascript",
  ".json": "application/json", ".wasm": "application/wasm",
};
const server = http.createServer(async (req, res) => {
  const file = path.join(root, decodeURIComponent(new URL(req.url, "http://x").pathname));
  if (!file.startsWith(root)) { res.writeHead(403).end(); return; }
  try {
    const body = await readFile(file.endsWith(path.sep) ? path.join(file, "index.html") : file);
    res.writeHead(200, { "content-type": types[path.extname(file)] || "application/octet-stream" });
    res.end(body);
  } catch {
    res.writeHead(404).end();
  }
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
setTimeout(() => process.exit(0), 1000 * Number(process.argv[3] || 600)).unref();
