// Jest global setup and teardown: a test run keeps its temporary files (each test's data
// directories, the processes' LMDB files, Redis and Dapr data, the browser's profile) in one
// directory of its own, set as TMPDIR for the tests and every process they start, and removed
// when the run ends. Without it every run left hundreds of directories in the system's /tmp.

const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

async function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'payg-test-'));
  process.env.PAYG_TEST_TMPDIR = dir;
  process.env.TMPDIR = dir;
}

async function teardown() {
  const dir = process.env.PAYG_TEST_TMPDIR;
  if (dir) rmSync(dir, { recursive: true, force: true });
}

module.exports = { setup, teardown };
