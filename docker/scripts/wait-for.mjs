#!/usr/bin/env node
/**
 * Init step of every service pod: waits until NATS accepts TCP connections and, when DATABASE_URL is
 * set, until this service's Postgres role can log in. Without it a fresh install (Postgres still
 * initialising, roles not created yet) sends the services into CrashLoopBackOff, whose back-off
 * delays the whole system's start by minutes after the dependencies are long up.
 *
 * Gives up after WAIT_TIMEOUT_S (default 600) so a wrong URL still ends in a visible failure.
 */
import { Socket } from 'node:net';

const timeoutS = Number(process.env.WAIT_TIMEOUT_S ?? 600);
const deadline = Date.now() + timeoutS * 1000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function tcp(host, port) {
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    socket.setTimeout(3000);
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('timeout', () => {
      socket.destroy();
      reject(new Error('timeout'));
    });
    socket.once('error', reject);
    socket.connect(port, host);
  });
}

async function until(what, attempt) {
  let lastLog = 0;
  for (;;) {
    try {
      await attempt();
      process.stdout.write(`wait-for: ${what} is up\n`);
      return;
    } catch (err) {
      if (Date.now() > deadline) {
        process.stderr.write(`wait-for: gave up on ${what} after ${timeoutS} s: ${err.message}\n`);
        process.exit(1);
      }
      if (Date.now() - lastLog > 10_000) {
        process.stdout.write(`wait-for: waiting for ${what} (${err.message})\n`);
        lastLog = Date.now();
      }
      await sleep(1000);
    }
  }
}

const natsUrl = new URL((process.env.NATS_URL ?? 'nats://127.0.0.1:4222').split(',')[0]);
await until(`NATS ${natsUrl.hostname}:${natsUrl.port || 4222}`, () =>
  tcp(natsUrl.hostname, Number(natsUrl.port || 4222)),
);

if (process.env.DATABASE_URL) {
  const { default: pg } = await import('pg');
  const db = new URL(process.env.DATABASE_URL);
  await until(`Postgres ${db.hostname}:${db.port || 5432} as ${decodeURIComponent(db.username)}`, async () => {
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
    } finally {
      await client.end().catch(() => undefined);
    }
  });
}
