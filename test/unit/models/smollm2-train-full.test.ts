/** SmolLM2-135M-Instruct, full fine-tuning: resumed equals uninterrupted; the export loads (smollm2-train.ts). */
import { test } from 'node:test';
import { resumesBitwise } from './smollm2-train.ts';

test(
  'SmolLM2 full fine-tuning: stopped after iteration 1 and resumed, the run ends bitwise equal',
  { timeout: 900_000 },
  () => resumesBitwise([]),
);
