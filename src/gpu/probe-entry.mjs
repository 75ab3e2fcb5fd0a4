// Child-process bootstrap for probe.ts: TypeScript loading, then the probe itself.
import { register } from 'tsx/esm/api';

register();
await import('./probe-main.ts');
