// The boot test's CRM stand-in app: listens on 3000, reads .env with the real dotenv package, and
// answers with the customers it reads from MariaDB as the app user (the mariadb client, with the
// password in its environment only; at DB_HOST:DB_PORT when .env names them, as on the scale-out
// topology's hosts) and the two addresses .env gives it.
require("dotenv").config();
const { execFile } = require("child_process");
const http = require("http");

const SQL = "SELECT id, name FROM customers ORDER BY id";

http.createServer((req, res) => {
  const server = process.env.DB_HOST ? [`--host=${process.env.DB_HOST}`, `--port=${process.env.DB_PORT}`] : [];
  execFile("mariadb", ["--batch", "--skip-column-names", ...server, `--user=${process.env.DB_USER}`, process.env.DB_NAME, "-e", SQL],
    { env: { ...process.env, MYSQL_PWD: process.env.DB_PASSWORD }, timeout: 10000 }, (error, stdout) => {
      if (error) {
        res.writeHead(500, { "Content-Type": "text/plain" }).end("database error\n");
        return;
      }
      const rows = stdout.trim().split("\n").filter(Boolean).map((line) => `customer ${line.replace("\t", " ")}`);
      res.writeHead(200, { "Content-Type": "text/plain" }).end([
        `FRONTENDURI ${process.env.FRONTENDURI}`, `BACKENDURI ${process.env.BACKENDURI}`,
        `NODE_ENV ${process.env.NODE_ENV}`, ...rows, "",
      ].join("\n"));
    });
}).listen(3000);
