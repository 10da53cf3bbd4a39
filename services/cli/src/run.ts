// The mcp-fleet command as plain JavaScript: what bin/mcp-fleet.js runs through tsx, as the entry of
// the bundle the image's build makes (bundle.ts), which its launcher runs an agent from.
import { main } from './main';

process.exitCode = await main(process.argv.slice(2));
