import { Command } from 'commander';
import { COMMANDS } from './commands/index.ts';
import { StarpoError } from '../errors.ts';

const program = new Command('starpo')
  .description('Multi-turn, trajectory-level RL for LLM agents, as a durable event-sourced pipeline')
  .showHelpAfterError()
  .version('0.1.0');
for (const register of COMMANDS) register(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  // Expected failures print one clear line; anything else keeps its stack for a bug report.
  if (err instanceof StarpoError) console.error(`starpo: ${err.message}`);
  else console.error(err);
  process.exitCode = 1;
}
