#!/usr/bin/env node
// The toolgate command: serve (the default), runner, keys and call; the commands live in src/cli/.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
const code = await main(process.argv.slice(2));
// Set, not process.exit(): stdout still drains when it is a pipe.
if (code !== undefined) process.exitCode = code;
