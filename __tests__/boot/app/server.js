// The boot test's CRM stand-in app: listens on 3000, reads .env with the real dotenv package, and
// answers with the customers it reads from MariaDB as the app user and the two addresses .env gives it.
// Like an app's connection pool, it keeps one connection for all its requests: one `mariadb` client
// (the password in its environment only; at DB_HOST:DB_PORT when .env names them, as on the scale-out
// topology's hosts), fed each request's query on its standard input, answers in order. A new client is
// started when that one ends (a restarted database), and a request whose client ended is tried once more.
// (A client per request cost the emulated guest about 0.2 s of CPU a request: most of its work under the
// boot test's load, docs/testing.md.)
require("dotenv").config();
const { spawn } = require("child_process");
const http = require("http");
const readline = require("readline");

const SQL = "SELECT id, name FROM customers ORDER BY id;";
/** The line that ends an answer: the client prints it after the rows. */
const END = "-- end of answer --";
/** A query with no answer by then ends its client (and fails the requests that wait on it). */
const QUERY_TIMEOUT_MS = 10000;

let client;

/** A new client: its pending queries are answered in the order they were written. */
function connect() {
  const server = process.env.DB_HOST ? [`--host=${process.env.DB_HOST}`, `--port=${process.env.DB_PORT}`] : [];
  const child = spawn("mariadb", ["--batch", "--skip-column-names", "--unbuffered", ...server, `--user=${process.env.DB_USER}`, process.env.DB_NAME],
    { env: { ...process.env, MYSQL_PWD: process.env.DB_PASSWORD }, stdio: ["pipe", "pipe", "ignore"] });
  const self = { child, pending: [], rows: [] };
  readline.createInterface({ input: child.stdout }).on("line", (line) => {
    if (line !== END) return void self.rows.push(line);
    const rows = self.rows;
    self.rows = [];
    self.pending.shift()?.resolve(rows);
  });
  const ended = () => {
    if (client === self) client = undefined;
    for (const query of self.pending.splice(0)) query.reject(new Error("the database client ended"));
  };
  child.on("exit", ended);
  child.on("error", ended);
  child.stdin.on("error", ended);
  return self;
}

/** The customers' rows, as `id\tname` lines, through the kept client. */
function customers() {
  client ??= connect();
  const { child, pending } = client;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill(), QUERY_TIMEOUT_MS);
    pending.push({ resolve: (rows) => { clearTimeout(timer); resolve(rows); }, reject: (error) => { clearTimeout(timer); reject(error); } });
    child.stdin.write(`${SQL}\nSELECT '${END}';\n`);
  });
}

http.createServer((req, res) => {
  customers().catch(() => customers()).then((lines) => {
    const rows = lines.filter(Boolean).map((line) => `customer ${line.replace("\t", " ")}`);
    res.writeHead(200, { "Content-Type": "text/plain" }).end([
      `FRONTENDURI ${process.env.FRONTENDURI}`, `BACKENDURI ${process.env.BACKENDURI}`,
      `NODE_ENV ${process.env.NODE_ENV}`, ...rows, "",
    ].join("\n"));
  }, () => {
    res.writeHead(500, { "Content-Type": "text/plain" }).end("database error\n");
  });
}).listen(3000);
