/**
 * A Countdown agent with a calculator tool, written against the OpenAI Chat Completions API with the openai npm
 * package, as an agent for any hosted model is written. Given the numbers and a target, it may call the
 * calculator, then answers with an expression in <answer></answer>; it scores itself (1 = the expression uses
 * each number once and hits the target, 0.1 = right numbers, wrong value, 0 otherwise) and reports the reward.
 *
 * Trained by starpo (see README "Train an existing agent"):
 *   npx starpo train --model <qwen3-dir> --agent "npx tsx examples/countdown-agent/agent.ts" --preset grpo
 * Against a standalone gateway (`npx starpo gateway --model <dir>`):
 *   STARPO_BASE_URL=http://127.0.0.1:8000/v1 npx tsx examples/countdown-agent/agent.ts
 */
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';

// The one line that points an agent at starpo: its gateway, and the episode this run belongs to.
const client = new OpenAI({
  baseURL: process.env.STARPO_BASE_URL,
  apiKey: process.env.STARPO_EPISODE_TOKEN ?? 'local',
});

const MAX_CALLS = 4;

const CALCULATOR: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'calculator',
    description: 'Evaluates an arithmetic expression with + - * / and parentheses.',
    parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
  },
};

/** mulberry32: a small seeded generator, so a seed always gives the same puzzle. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Three numbers and a target reachable as (a op b) op c, so every puzzle has a solution. */
function puzzle(seed: number): { numbers: number[]; target: number } {
  const next = random(seed);
  const numbers = [0, 0, 0].map(() => 1 + Math.floor(next() * 12));
  const ops = ['+', '-', '*'];
  const [a, b, c] = numbers;
  const target = evaluate(`(${a} ${ops[Math.floor(next() * 3)]} ${b}) ${ops[Math.floor(next() * 3)]} ${c}`);
  return target > 0 ? { numbers, target } : { numbers, target: a + b + c };
}

/** + - * / and parentheses over numbers, by recursive descent (no eval); throws on anything else. */
function evaluate(text: string): number {
  const tokens = text.match(/\d+(\.\d+)?|[-+*/()]|\S/g) ?? [];
  let at = 0;
  const peek = () => tokens[at];
  const atom = (): number => {
    const t = tokens[at++];
    if (t === '(') {
      const v = sum();
      if (tokens[at++] !== ')') throw new Error('missing )');
      return v;
    }
    if (t === '-') return -atom();
    if (t === undefined || !/^\d/.test(t)) throw new Error(`unexpected ${t ?? 'end'}`);
    return Number(t);
  };
  const product = (): number => {
    let v = atom();
    while (peek() === '*' || peek() === '/') v = tokens[at++] === '*' ? v * atom() : v / atom();
    return v;
  };
  const sum = (): number => {
    let v = product();
    while (peek() === '+' || peek() === '-') v = tokens[at++] === '+' ? v + product() : v - product();
    return v;
  };
  const v = sum();
  if (at !== tokens.length) throw new Error(`unexpected ${tokens[at]}`);
  return v;
}

function calculator(args: string): string {
  try {
    return String(evaluate(String(JSON.parse(args).expression)));
  } catch (err) {
    return `error: ${(err as Error).message}`;
  }
}

/** RAGEN's Countdown reward: 1 solved, 0.1 the right numbers with the wrong value, 0 otherwise. */
function score(answer: string, numbers: readonly number[], target: number): number {
  const used = (answer.match(/\d+/g) ?? []).map(Number).sort((x, y) => x - y);
  const right = used.length === numbers.length && [...numbers].sort((x, y) => x - y).every((n, i) => n === used[i]);
  if (!right) return 0;
  try {
    return Math.abs(evaluate(answer) - target) < 1e-9 ? 1 : 0.1;
  } catch {
    return 0.1;
  }
}

async function solve(numbers: number[], target: number): Promise<string> {
  const messages: ChatCompletionMessageParam[] = [
    {
      role: 'system',
      content:
        'You solve Countdown puzzles. Check arithmetic with the calculator. ' + 'End with <answer>expression</answer>.',
    },
    {
      role: 'user',
      content: `Numbers: ${numbers.join(', ')}. Target: ${target}. ` + 'Use each number exactly once with + - * / ( ).',
    },
  ];
  for (let call = 0; call < MAX_CALLS; call++) {
    const completion = await client.chat.completions.create({ model: 'policy', messages, tools: [CALCULATOR] });
    const reply = completion.choices[0].message;
    messages.push(reply);
    const calls = (reply.tool_calls ?? []).filter((c) => c.type === 'function');
    if (calls.length === 0) return /<answer>([\s\S]*?)<\/answer>/.exec(reply.content ?? '')?.[1] ?? reply.content ?? '';
    for (const c of calls)
      messages.push({ role: 'tool', tool_call_id: c.id, content: calculator(c.function.arguments) });
  }
  return '';
}

async function main(): Promise<void> {
  const { numbers, target } = puzzle(Number(process.env.STARPO_TASK_SEED ?? 0));
  const reward = score(await solve(numbers, target), numbers, target);
  if (process.env.STARPO_REWARD_URL) {
    const headers = { authorization: `Bearer ${process.env.STARPO_EPISODE_TOKEN}`, 'content-type': 'application/json' };
    const body = JSON.stringify({ reward, success: reward === 1 });
    const res = await fetch(process.env.STARPO_REWARD_URL, { method: 'POST', headers, body });
    if (!res.ok) throw new Error(`reward report failed: ${res.status} ${await res.text()}`);
  }
  console.log(JSON.stringify({ numbers, target, reward }));
}

await main();
