/** SmolLM2-135M-Instruct, full fine-tuning: resumed equals uninterrupted; the export loads (smollm2-train.ts). */
import { smollm2ResumeTest } from './smollm2-train.ts';

smollm2ResumeTest('full fine-tuning', []);
