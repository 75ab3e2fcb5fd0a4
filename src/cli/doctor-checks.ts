// What `starpo doctor` checks (loaded only when it runs: the checks load onnxruntime and the services' specs).
import onnxProto from 'onnx-proto';
import { SERVICES, ourPid, probe } from '../services/manager.ts';
import { hasCommand } from '../services/exec.ts';
import { dataState, vanishedLine } from '../services/data.ts';
import { providerStatuses } from './provider-report.ts';
import { newTable } from '../terminal.ts';
import { hubCacheDir } from '../models/hub/cache.ts';
import { listCachedModels } from '../models/list.ts';
import { CACHE_DIR } from '../services/paths.ts';
import { join } from 'node:path';

const { onnx } = onnxProto;

interface Check {
  name: string;
  ok: boolean;
  /** A failed optional check is reported but does not fail the command (the embedded driver needs no services). */
  required: boolean;
  detail: string;
  /** Execution providers only: the state by name (src/gpu/status.ts), for scripts. */
  state?: string;
}

function checkNode(): Check {
  const [major, minor] = process.versions.node.split('.').map(Number);
  const ok = major > 20 || (major === 20 && minor >= 3);
  return { name: 'node', ok, required: true, detail: `v${process.versions.node} (need >= 20.3)` };
}

/** Loads onnxruntime-node and runs a one-node graph (Add), proving the native library works here. */
async function checkOnnxRuntime(): Promise<Check> {
  try {
    const ort = await import('onnxruntime-node');
    const tensorType = { elemType: onnx.TensorProto.DataType.FLOAT, shape: { dim: [{ dimValue: 2 }] } };
    const model = onnx.ModelProto.encode({
      irVersion: 8,
      opsetImport: [{ domain: '', version: 17 }],
      graph: {
        name: 'doctor',
        node: [{ opType: 'Add', input: ['a', 'b'], output: ['c'] }],
        input: [
          { name: 'a', type: { tensorType } },
          { name: 'b', type: { tensorType } },
        ],
        output: [{ name: 'c', type: { tensorType } }],
      },
    }).finish();
    const session = await ort.InferenceSession.create(model);
    const a = new ort.Tensor('float32', Float32Array.from([1, 2]), [2]);
    const out = await session.run({ a, b: a });
    const c = Array.from(out.c.data as Float32Array);
    const ok = c[0] === 2 && c[1] === 4;
    return {
      name: 'onnxruntime-node',
      ok,
      required: true,
      detail: `v${ort.env.versions.common}; CPU Add -> [${c.join(', ')}]`,
    };
  } catch (err) {
    return { name: 'onnxruntime-node', ok: false, required: true, detail: String(err) };
  }
}

/** cpu must work; cuda and webgpu say which state they are in (not installed, no driver, no device, ...). */
async function checkProviders(): Promise<Check[]> {
  return (await providerStatuses()).map((s) => ({
    name: `provider ${s.provider}`,
    ok: s.state === 'working',
    required: s.provider === 'cpu',
    detail: s.detail,
    state: s.state,
  }));
}

function checkTools(): Check[] {
  return [...new Set(SERVICES.flatMap((s) => s.prerequisites))].map((tool) => ({
    name: tool,
    ok: hasCommand(tool),
    required: false,
    detail: hasCommand(tool) ? 'on PATH' : 'missing (needed to install services)',
  }));
}

async function checkServices(): Promise<Check[]> {
  return Promise.all(
    SERVICES.map(async (spec) => {
      const ready = await probe(spec);
      const pid = ourPid(spec);
      const where = spec
        .ports()
        .map((p) => `127.0.0.1:${p}`)
        .join(' ');
      const data = dataState(spec);
      // Data that vanished since it was created outranks everything else: runs kept there are lost.
      if (data.kind === 'vanished')
        return { name: spec.name, ok: false, required: false, detail: vanishedLine(spec, data) };
      const detail = ready
        ? `answering on ${where}${pid === null ? ' (not started by starpo)' : ` (pid ${pid})`}`
        : `not reachable on ${where}${pid === null ? '' : ` (pid ${pid} running but not answering)`}` +
          '; run `starpo services start`';
      return { name: spec.name, ok: ready, required: false, detail };
    }),
  );
}

/** Where `--model` finds and puts models; informational (a run with no pretrained model needs neither). */
async function checkModelCaches(): Promise<Check[]> {
  const models = await listCachedModels();
  const count = (kind: string) => models.filter((m) => m.kind === kind).length;
  return [
    {
      name: 'model cache',
      ok: true,
      required: false,
      detail: `${join(CACHE_DIR, 'models')} (${count('named')} packaged, ${count('gguf')} imported GGUF)`,
    },
    { name: 'hub cache', ok: true, required: false, detail: `${hubCacheDir()} (${count('hub')} snapshots)` },
  ];
}

/** `starpo doctor`: every check, as a table or JSON lines; exit code 1 when a required one fails. */
export async function doctor(opts: { json?: boolean }): Promise<void> {
  const checks = [
    checkNode(),
    await checkOnnxRuntime(),
    ...(await checkProviders()),
    ...checkTools(),
    ...(await checkServices()),
    ...(await checkModelCaches()),
  ];
  if (opts.json) {
    for (const c of checks) console.log(JSON.stringify(c));
  } else {
    const table = newTable(['check', 'status', 'detail']);
    for (const c of checks)
      table.push([c.name, c.ok ? 'ok' : c.required ? 'FAIL' : c.state ? 'unavailable' : 'down/missing', c.detail]);
    console.log(table.toString());
  }
  if (checks.some((c) => c.required && !c.ok)) process.exitCode = 1;
}
