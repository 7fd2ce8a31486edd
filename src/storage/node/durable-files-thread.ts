// The program of DurableFiles' writing threads (durable-files.ts): a batch's files written, synced
// (by filesystem or file by file), renamed and their directories synced, then its durability cell
// set and its outcomes posted.

/**
 * Files a thread holds open at once: a batch's files stay open from their write to its sync, and a
 * batch of more files than the process may open (RLIMIT_NOFILE, which Node raises to its hard limit:
 * often 1,024 to 20,000) failed with EMFILE, every time it was tried again. Four threads of
 * 1,000 each leave room for the rest of the server under a limit of 8,192; a slice is one sync.
 */
export const OPEN_AT_ONCE = 1000;

/**
 * The thread's code, plain JavaScript evaluated in the worker. A missing directory is made (and
 * made again if a concurrent delete pruned it between mkdir and open, as the async path did).
 * Directories made or found are remembered across batches, with the filesystem each lies on: a
 * batch of thousands of files spread over hundreds of directories spent a mkdir and a stat on
 * each directory again; a directory pruned since is met as ENOENT and made again.
 */
export const WORKER_CODE = `
const { parentPort } = require('node:worker_threads');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const failure = (error) => ({ code: error.code, message: error.message });
const MAX_REMEMBERED = 100000;
const OPEN_AT_ONCE = ${OPEN_AT_ONCE};
const made = new Set();
const devices = new Map();
const remember = (collection) => {
  if (collection.size >= MAX_REMEMBERED) collection.clear();
};
// One directory of each filesystem that the files written lie on, synced by one command; false when it could not be.
const syncFileSystems = (command, files, outcomes) => {
  const byDevice = new Map();
  const seen = new Set();
  try {
    files.forEach((file, index) => {
      if (outcomes[index] !== null || seen.has(file.dir)) return;
      seen.add(file.dir);
      let device = devices.get(file.dir);
      if (device === undefined) {
        device = fs.statSync(file.dir).dev;
        remember(devices);
        devices.set(file.dir, device);
      }
      if (!byDevice.has(device)) byDevice.set(device, file.dir);
    });
  } catch {
    return false;
  }
  if (byDevice.size === 0) return true;
  // Only PATH is passed on: the server's environment holds secrets the command has no use for.
  const run = spawnSync(command, ['--file-system', '--', ...byDevice.values()], {
    stdio: 'ignore',
    timeout: 600000,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  });
  return run.error === undefined && run.status === 0;
};
// Writes, syncs, closes and renames the files of a batch from start to end, all open at once.
const writeSlice = (files, start, end, outcomes, dirMode, fileMode, syncCommand, syncFileSystemsFrom) => {
  const fds = [];
  const slice = files.slice(start, end);
  const sliceOutcomes = outcomes.slice(start, end);
  // Everything is written before anything is synced: the syncs after the first find little left to do.
  slice.forEach((file, index) => {
    for (let attempt = 0; ; attempt += 1) {
      try {
        if (attempt > 0 || !made.has(file.dir)) {
          fs.mkdirSync(file.dir, { recursive: true, mode: dirMode });
          remember(made);
          made.add(file.dir);
        }
        const fd = fs.openSync(file.temp, 'wx', fileMode);
        fds[index] = fd;
        let offset = 0;
        while (offset < file.bytes.byteLength) offset += fs.writeSync(fd, file.bytes, offset);
        return;
      } catch (error) {
        if (error.code === 'ENOENT' && attempt < 5 && fds[index] === undefined) continue;
        sliceOutcomes[index] = failure(error);
        return;
      }
    }
  });
  const synced = slice.length >= syncFileSystemsFrom && syncFileSystems(syncCommand, slice, sliceOutcomes);
  slice.forEach((file, index) => {
    const fd = fds[index];
    if (fd === undefined) return;
    try {
      if (sliceOutcomes[index] === null && !synced) fs.fdatasyncSync(fd);
    } catch (error) {
      sliceOutcomes[index] = failure(error);
    }
    try {
      fs.closeSync(fd);
    } catch (error) {
      if (sliceOutcomes[index] === null) sliceOutcomes[index] = failure(error);
    }
    try {
      if (sliceOutcomes[index] === null) fs.renameSync(file.temp, file.file);
    } catch (error) {
      sliceOutcomes[index] = failure(error);
    }
    if (sliceOutcomes[index] !== null) {
      try {
        fs.unlinkSync(file.temp);
      } catch {}
    }
  });
  sliceOutcomes.forEach((outcome, index) => (outcomes[start + index] = outcome));
};
parentPort.on('message', ({ id, dirMode, fileMode, syncCommand, syncFileSystemsFrom, files, syncDirectories, cell }) => {
  const outcomes = files.map(() => null);
  // A batch of tens of thousands of files (journals moved together) is written a slice at a time:
  // each slice's files are open together until its sync, and a process may open only so many.
  for (let start = 0; start < files.length; start += OPEN_AT_ONCE)
    writeSlice(files, start, start + OPEN_AT_ONCE, outcomes, dirMode, fileMode, syncCommand, syncFileSystemsFrom);
  if (syncDirectories) {
    for (const dir of new Set(files.filter((file, index) => outcomes[index] === null).map((file) => file.dir))) {
      try {
        const fd = fs.openSync(dir, 'r');
        try {
          fs.fsyncSync(fd);
        } finally {
          fs.closeSync(fd);
        }
      } catch (error) {
        files.forEach((file, index) => {
          if (file.dir === dir && outcomes[index] === null) outcomes[index] = failure(error);
        });
      }
    }
  }
  if (cell !== undefined) {
    Atomics.store(cell, 0, outcomes.every((outcome) => outcome === null) ? 1 : 2);
    Atomics.notify(cell, 0);
  }
  parentPort.postMessage({ id, outcomes });
});
`;
