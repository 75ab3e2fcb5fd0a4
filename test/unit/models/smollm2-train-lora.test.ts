/** SmolLM2-135M-Instruct under LoRA: stopped and resumed equals uninterrupted; the export loads (smollm2-train.ts). */
import { smollm2ResumeTest } from './smollm2-train.ts';

smollm2ResumeTest('LoRA', ['loraRank=4', 'loraAlpha=8']);
