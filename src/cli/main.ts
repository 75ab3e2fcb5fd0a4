import { Command, CommanderError } from 'commander';
import { COMMANDS } from './commands/index.ts';
import { reportFailure, UsageError } from './failure.ts';

// Set before the commands are added, so every subcommand inherits them: commander throws instead of
// exiting, and prints nothing itself; reportFailure prints each failure once, as one line.
const program = new Command('starpo')
  .description('Multi-turn, trajectory-level RL for LLM agents, as a durable event-sourced pipeline')
  .version('0.1.0')
  .exitOverride()
  .configureOutput({ outputError: () => undefined });
for (const register of COMMANDS) register(program);

const known = (name: string): boolean => program.commands.some((c) => c.name() === name || c.aliases().includes(name));

/**
 * The command the arguments name ("starpo train"), or a UsageError for an unknown one. Checked before
 * commander parses, which would otherwise print the general help for `starpo nosuchcmd --help` and exit 0.
 */
function commandOf(args: readonly string[]): string {
  const [first, second] = args.filter((a) => !a.startsWith('-')); // the program's own options take no values
  const named = first === 'help' ? second : first;
  if (named !== undefined && !known(named)) throw new UsageError(`unknown command '${named}'`);
  return named === undefined ? 'starpo' : `starpo ${named}`;
}

/** Commander's own exits that are not failures: help and version shown on request (`starpo help train` included). */
const quiet = (err: CommanderError): boolean =>
  err.code === 'commander.helpDisplayed' ||
  err.code === 'commander.version' ||
  (err.code === 'commander.help' && err.exitCode === 0);

async function main(args: readonly string[]): Promise<void> {
  let command = 'starpo';
  try {
    command = commandOf(args);
    await program.parseAsync(args, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError && quiet(err)) return;
    // `starpo` alone: commander has printed the help; no command is a usage error.
    if (err instanceof CommanderError && err.code === 'commander.help') process.exitCode = 2;
    else process.exitCode = reportFailure(err, command);
  }
}

const fatal = (err: unknown) => process.exit(reportFailure(err));
process.on('uncaughtException', fatal);
process.on('unhandledRejection', fatal);
await main(process.argv.slice(2));
