// Policy engine benchmark (JSON lines on stdout): node --import tsx scripts/bench-engine.ts
import { benchEngine } from '../src/cli/commands/bench-engine.ts';

await benchEngine();
