#!/usr/bin/env node
// The `longrun` command of the npm package `longrun` (its bin/longrun.js; scripts/npm_package.ts
// copies this file there). The executable itself is in one package per platform
// (@longrun/linux-x64, @longrun/win32-x64, …), each an optional dependency that npm installs only
// where its os, cpu and libc fields match. This finds the one for this machine, runs it with the
// same arguments and stdio, forwards the signals it gets, and exits as the executable did. When
// that package is not installed it says, in one line, which platform it looked for and how to fix
// it, and exits 1. Plain JS, CommonJS, no dependencies.
"use strict";

const { spawn } = require("node:child_process");
const path = require("node:path");

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGWINCH"];

/** "glibc" or "musl" on Linux (Node built for musl reports no glibc runtime), else null. */
function libc() {
  if (process.platform !== "linux") return null;
  try {
    const report = process.report.getReport();
    const header = typeof report === "string" ? JSON.parse(report).header : report.header;
    return header && header.glibcVersionRuntime ? "glibc" : "musl";
  } catch {
    return "glibc";
  }
}

function fail(message) {
  process.stderr.write(`longrun: ${message}\n`);
  process.exit(1);
}

function executable() {
  const self = require("../package.json");
  const c = libc();
  const platform = `${process.platform}-${process.arch}${c === "musl" ? "-musl" : ""}`;
  const name = `@longrun/${platform}`;
  const described = `${process.platform}-${process.arch}${c ? ` (${c})` : ""}`;
  const shipped = Object.keys(self.optionalDependencies || {});
  if (!shipped.includes(name)) {
    fail(`longrun ${self.version} has no executable for ${described} (it ships ${shipped.map((n) => n.slice("@longrun/".length)).join(", ")}); build it from source for this machine`);
  }
  let dir;
  try {
    dir = path.dirname(require.resolve(`${name}/package.json`));
  } catch {
    fail(`the executable for ${described} is in the package ${name}, which is not installed (npm leaves optional dependencies out with --omit=optional or --no-optional): install longrun again without that option, or add it with npm i ${name}@${self.version}`);
  }
  return path.join(dir, "bin", process.platform === "win32" ? "longrun.exe" : "longrun");
}

function main() {
  const exe = executable();
  const child = spawn(exe, process.argv.slice(2), { stdio: "inherit" });
  // a terminal's Ctrl-C reaches both processes; a signal sent to this one alone is passed on
  const forward = {};
  for (const s of SIGNALS) {
    forward[s] = () => {
      try {
        child.kill(s);
      } catch {
        // the child is gone already
      }
    };
    try {
      process.on(s, forward[s]);
    } catch {
      // a signal this platform does not have (Windows)
    }
  }
  child.on("error", (e) => fail(`could not run ${exe}: ${e.message}`));
  child.on("exit", (code, signal) => {
    for (const s of SIGNALS) process.removeListener(s, forward[s]);
    if (signal) {
      // die of the same signal, so whoever started this sees what the executable saw
      try {
        process.kill(process.pid, signal);
      } catch {
        // fall through to the exit status a shell would report
      }
      const n = require("node:os").constants.signals[signal];
      process.exit(128 + (typeof n === "number" ? n : 1));
    }
    process.exit(code === null ? 1 : code);
  });
}

main();
