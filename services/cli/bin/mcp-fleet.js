#!/usr/bin/env node
// The mcp-fleet command. The workspace runs its TypeScript through tsx (no build step), so a
// fresh clone works after `npm ci`.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/main.ts');
process.exitCode = await main(process.argv.slice(2));
