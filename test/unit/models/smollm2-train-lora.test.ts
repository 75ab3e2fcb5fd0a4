/** SmolLM2-135M-Instruct under LoRA: stopped and resumed equals uninterrupted; the export loads (smollm2-train.ts). */
import { test } from 'node:test';
import { resumesBitwise } from './smollm2-train.ts';

test('SmolLM2 LoRA: stopped after iteration 1 and resumed, the run ends bitwise equal', { timeout: 900_000 }, () =>
  resumesBitwise(['loraRank=4', 'loraAlpha=8']),
);
