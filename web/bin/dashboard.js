#!/usr/bin/env node
// The dashboard on its own (the web image's command): `node web/bin/dashboard.js`. Its TypeScript
// runs through tsx, as the mcp-fleet command's does (no build step beyond `next build`).
import { register } from 'tsx/esm/api';

register();
const { serve } = await import('../serve.ts');
process.exitCode = await serve(process.env);
