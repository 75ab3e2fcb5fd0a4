/**
 * Addresses of the services. Defaults are the local ones on the usual ports; STARPO_*_PORT overrides each,
 * so two checkouts (or a CI run beside a developer's services) can coexist on one machine. Workers on
 * several machines share one Temporal, Kafka and S3 through STARPO_TEMPORAL_ADDRESS (host:port),
 * STARPO_KAFKA_BROKERS (host:port,…) and STARPO_S3_ENDPOINT (http://host:port): see docs/scale-out.md.
 */
function portFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`${name}=${raw} is not a TCP port (1-65535)`);
  }
  return port;
}

/** A remote service's address from the environment (empty or unset: the local one). */
const remote = (name: string): string | undefined => process.env[name]?.trim() || undefined;

export const endpoints = {
  temporal: {
    port: portFromEnv('STARPO_TEMPORAL_PORT', 7233),
    get address() {
      return remote('STARPO_TEMPORAL_ADDRESS') ?? `127.0.0.1:${this.port}`;
    },
  },
  kafka: {
    port: portFromEnv('STARPO_KAFKA_PORT', 9092),
    controllerPort: portFromEnv('STARPO_KAFKA_CONTROLLER_PORT', 9093),
    get brokers() {
      return (
        remote('STARPO_KAFKA_BROKERS')
          ?.split(',')
          .map((b) => b.trim()) ?? [`127.0.0.1:${this.port}`]
      );
    },
  },
  s3: {
    port: portFromEnv('STARPO_S3_PORT', 9090),
    // S3Mock always opens a second plain-HTTP connector; we give it a known port so a clash is reported.
    extraPort: portFromEnv('STARPO_S3_EXTRA_PORT', 9091),
    get endpoint() {
      return remote('STARPO_S3_ENDPOINT') ?? `http://127.0.0.1:${this.port}`;
    },
  },
};
