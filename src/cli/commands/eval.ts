import type { Command } from 'commander';
import { ConfigError } from '../../errors.ts';
import { DEFAULT_STORE_URI } from '../../durable/protocol.ts';
import type { EvalResult } from '../../replay/evaluate.ts';
import { newTable } from '../../terminal.ts';
import { MODEL_HELP } from './train.ts';

export interface EvalFlags {
  checkpoint?: string;
  model?: string;
  set?: string[];
  runsDir: string;
  /** files (default) or s3. */
  source?: string;
  store?: string;
  env?: string;
  seeds?: string;
  samples?: string;
  temperature?: string;
  maxResponseTokens?: string;
  json?: boolean;
}

function numberFlag(name: string, text: string | undefined, integer: boolean, min: number): number | undefined {
  if (text === undefined) return undefined;
  const x = Number(text);
  if (text.trim() === '' || !Number.isFinite(x) || x < min || (integer && !Number.isInteger(x))) {
    throw new ConfigError(name, `must be ${integer ? 'an integer' : 'a number'} ≥ ${min}, got "${text}"`);
  }
  return x;
}

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;

export function renderEval(r: EvalResult): string {
  const ks = Object.keys(r.passAtK);
  const head = [
    'checkpoint',
    'env',
    'env spec',
    'seeds × samples',
    'temperature',
    'success',
    ...ks,
    'oracle',
    'success / oracle',
    'parsed',
    'cut',
    'echo',
  ];
  const table = newTable(head);
  const { lineageId, iteration } = r.checkpoint;
  table.push([
    `${r.runId} ${lineageId}@${iteration}`,
    r.env,
    r.envSpecId,
    `${r.seeds} × ${r.samples}`,
    r.temperature,
    pct(r.successRate),
    ...ks.map((k) => pct(r.passAtK[k])),
    pct(r.oracleSuccess),
    r.oracleSuccess > 0 ? pct(r.successRate / r.oracleSuccess) : '-',
    pct(r.format.parsed),
    pct(r.format.cut),
    pct(r.format.echo),
  ]);
  return table.toString();
}

/** The durable store to read the run from, for --source s3; undefined for a local run. */
function storeOf(flags: EvalFlags): string | undefined {
  if ((flags.source ?? 'files') === 'files') {
    if (flags.store !== undefined) throw new ConfigError('--store', 'is read with --source s3 only');
    return undefined;
  }
  if (flags.source !== 's3') throw new ConfigError('--source', `"${flags.source}": one of files, s3`);
  return flags.store ?? DEFAULT_STORE_URI;
}

export async function evalCommand(flags: EvalFlags, say: (line: string) => void = console.log): Promise<EvalResult> {
  const { evaluateCheckpoint } = await import('../../replay/evaluate.ts');
  const result = await evaluateCheckpoint({
    checkpoint: flags.checkpoint,
    model: flags.model,
    overrides: flags.set,
    runsDir: flags.runsDir,
    storeUri: storeOf(flags),
    env: flags.env,
    seeds: numberFlag('--seeds', flags.seeds, true, 1),
    samples: numberFlag('--samples', flags.samples, true, 1),
    temperature: numberFlag('--temperature', flags.temperature, false, 0),
    maxResponseTokens: numberFlag('--max-response-tokens', flags.maxResponseTokens, true, 1),
  });
  say(flags.json ? JSON.stringify({ type: 'eval', ...result }) : renderEval(result));
  return result;
}

export function registerEval(program: Command): void {
  program
    .command('eval')
    .description(
      'Load the actor from a run checkpoint (or a model directory); report validation success and pass@k beside ' +
        'the oracle ceiling, and the format rates: turns with a parsed action, responses cut at the token limit, ' +
        'responses that echo their prompt',
    )
    .option('--checkpoint <run-dir[@iteration]>', 'run directory or id, @iteration optional (default: newest)')
    .option('--model <model>', `instead of a checkpoint, a pretrained model with its own weights: ${MODEL_HELP}`)
    .option(
      '--set <key=value>',
      'with --model: config overrides (template, maxResponseTokens, …; repeatable)',
      (v: string, acc: string[]) => [...acc, v],
      [],
    )
    .option('--env <name>', "environment preset (default: the run's)")
    .option('--seeds <n>', "validation seeds (default: the run's valSeeds)")
    .option('--samples <k>', 'samples per seed; pass@k is reported for k = 1 and k = samples', '1')
    .option('--temperature <t>', "sampling temperature, 0 = greedy (default: the run's valTemperature)")
    .option('--max-response-tokens <n>', "tokens one turn may write (default: the run's maxResponseTokens)")
    .option('--runs-dir <dir>', 'where runs live, for a bare run id', 'runs')
    .option('--source <source>', "files (the run's directory) or s3 (a durable run's store)", 'files')
    .option('--store <uri>', "the durable runs' store for --source s3 (default: s3://starpo/runs/)")
    .option('--json', 'one JSON line instead of a table')
    .action(async (flags: EvalFlags) => {
      await evalCommand(flags);
    });
}
