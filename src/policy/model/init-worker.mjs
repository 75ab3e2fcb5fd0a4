// Worker bootstrap for initParamsParallel: TypeScript loading, as engine/worker-entry.mjs does.
import { register } from 'tsx/esm/api';

register();
await import('./init-worker.ts');
