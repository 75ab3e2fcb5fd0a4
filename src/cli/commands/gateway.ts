import type { Command } from 'commander';
import { ConfigError } from '../../errors.ts';
import { MODEL_HELP } from './train.ts';

interface GatewayFlags {
  model?: string;
  checkpoint?: string;
  runsDir: string;
  set: string[];
  host: string;
  port: string;
  maxTokens: string;
}

function intFlag(name: string, text: string, min: number): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isInteger(n) || n < min) {
    throw new ConfigError(name, `must be an integer ≥ ${min}, got "${text}"`);
  }
  return n;
}

async function gateway(flags: GatewayFlags): Promise<void> {
  const { serveGateway } = await import('../../gateway/serve.ts');
  const served = await serveGateway({
    model: flags.model,
    checkpoint: flags.checkpoint,
    runsDir: flags.runsDir,
    overrides: flags.set,
    host: flags.host,
    port: intFlag('--port', flags.port, 0),
    maxTokens: intFlag('--max-tokens', flags.maxTokens, 1),
  });
  console.log(`gateway for ${served.model} on ${served.url} (OPENAI_BASE_URL=${served.url}); Ctrl-C stops it`);
  await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
  await served.close();
}

export function registerGateway(program: Command): void {
  program
    .command('gateway')
    .description('Serve a model or a run checkpoint as an OpenAI-compatible chat-completions API, recording every call')
    .option('--model <model>', `serve a pretrained model with its own weights: ${MODEL_HELP}`)
    .option('--checkpoint <run-dir[@iteration]>', "instead: a run's actor (default: its newest checkpoint)")
    .option('--runs-dir <dir>', 'where runs live, for a bare run id', 'runs')
    .option(
      '--set <key=value>',
      'config overrides (modelContext, chatThinking, threads, …; repeatable)',
      (v: string, acc: string[]) => [...acc, v],
      [],
    )
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--port <n>', 'port (0 = any free one)', '8000')
    .option('--max-tokens <n>', 'new tokens of a request that sets no max_tokens', '512')
    .action(gateway);
}
