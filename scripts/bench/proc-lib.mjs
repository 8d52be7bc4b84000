// CPU seconds of processes from /proc, for the benchmarks' "where the time goes" lines (Linux).
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** CPU seconds (user + system) a process (or, with `/task/<tid>`, one of its threads) used so far, what its reaped children used, and its parent's pid. */
export function cpuSeconds(pid, task = '') {
  try {
    // Fields after the command name (which may hold spaces): utime 14, stime 15, cutime 16, cstime 17.
    const stat = readFileSync(`/proc/${pid}${task}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return {
      own: (Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND,
      children: (Number(f[13]) + Number(f[14])) / TICKS_PER_SECOND,
      ppid: Number(f[1]),
    };
  } catch {
    return { own: 0, children: 0, ppid: -1 };
  }
}

/** Read and write system calls a process made so far (`/proc/<pid>/io`: every socket send and receive counts). */
export function syscalls(pid) {
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    const field = (name) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(io)?.[1] ?? 0);
    return { reads: field('syscr'), writes: field('syscw') };
  } catch {
    return { reads: 0, writes: 0 };
  }
}

/** Postgres's CPU so far: the postmaster, its live children (backends, writers) and its reaped ones. */
export function postgresCpu(postmaster) {
  const p = cpuSeconds(postmaster);
  let total = p.own + p.children;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const c = cpuSeconds(Number(entry));
    if (c.ppid === postmaster) total += c.own + c.children;
  }
  return total;
}

/**
 * Postgres's CPU so far per process, by pid (its live children), plus `exited`: the postmaster's own
 * and what its reaped children used (autovacuum workers and backends that ended). With a pid → role
 * map (e.g. from pg_stat_activity), `byRole` sums two such readings' difference per role.
 */
export function postgresCpuByPid(postmaster) {
  const p = cpuSeconds(postmaster);
  const byPid = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const c = cpuSeconds(Number(entry));
    if (c.ppid === postmaster) byPid.set(Number(entry), c.own + c.children);
  }
  return { byPid, exited: p.own + p.children };
}

/** Seconds per role between two `postgresCpuByPid` readings; a pid missing from `roles` counts as `other`. */
export function byRole(before, after, roles) {
  // A process that ended in the window moved its whole CPU into `exited`; what it had used before
  // the window is not the window's.
  let usedBefore = 0;
  for (const [pid, s] of before.byPid) if (!after.byPid.has(pid)) usedBefore += s;
  const out = { exited: after.exited - before.exited - usedBefore };
  for (const [pid, s] of after.byPid) {
    const role = roles.get(pid) ?? 'other';
    out[role] = (out[role] ?? 0) + s - (before.byPid.get(pid) ?? 0);
  }
  return out;
}

/**
 * A process's CPU seconds split by thread: its main thread (whose tid is its pid) and all the others
 * (in Node, V8's garbage collector and compiler threads and libuv's pool; threads that ended count
 * here too), and its live threads' context switches: voluntary (it waited: a socket read, a lock)
 * and involuntary (preempted).
 */
export function threads(pid) {
  const out = { main: cpuSeconds(pid, `/task/${pid}`).own, others: 0, voluntary: 0, involuntary: 0 };
  let tids;
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      out.voluntary += Number(/^voluntary_ctxt_switches:\s+(\d+)$/m.exec(status)?.[1] ?? 0);
      out.involuntary += Number(/^nonvoluntary_ctxt_switches:\s+(\d+)$/m.exec(status)?.[1] ?? 0);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  out.others = Math.max(0, cpuSeconds(pid).own - out.main);
  return out;
}

/**
 * A service's /metrics, read as `sample(name, label)`: the value of the first sample of `name` whose
 * labels include `label` (e.g. `kind="major"`; none: the first of any labels), NaN when there is none.
 */
export async function scrapeMetrics(metricsUrl) {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  return (name, label = '') =>
    Number(new RegExp(`^${name}(\\{[^}]*${label}[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[2] ?? NaN);
}
