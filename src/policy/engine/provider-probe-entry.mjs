// Child-process bootstrap for provider-probe.ts: TypeScript loading, then the probe itself.
import { register } from 'tsx/esm/api';

register();
await import('./provider-probe-main.ts');
