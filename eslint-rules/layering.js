// starpo's own ESLint rules for the shape of the code base (no plugin on npm checks both with our table and without
// a TypeScript resolver): `starpo/layers` refuses an import that goes up the layering table of eslint.config.js, and
// `starpo/no-cycle` refuses an import that closes a cycle between modules (type-only imports count: a cycle of
// types is still two modules that cannot be read apart). scripts/import-map.mjs prints the same graph.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, resolve } from 'node:path';

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '..');
const SCANNED = ['src', 'activities', 'workflows', 'scripts', 'test', 'bin', 'examples'];
const SOURCE = /\.(ts|mjs|js)$/;
// Static imports and re-exports, dynamic imports. A file named by `new URL(…, import.meta.url)` is left out: it is
// run in another thread or process (a worker entry, the CLI a test spawns, a Python peer), not imported.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g;

/** Repository-relative path with forward slashes. */
export const repoPath = (abs) => relative(ROOT, abs).split('\\').join('/');

/** The repository file a relative specifier in `fromRepoPath` names, repository-relative. */
export const resolveSpecifier = (fromRepoPath, specifier) =>
  normalize(join(dirname(fromRepoPath), specifier))
    .split('\\')
    .join('/');

function walk(dir, out) {
  let entries;
  try {
    entries = readdirSync(join(ROOT, dir), { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && e.name !== 'fixtures') walk(path, out);
    } else if (SOURCE.test(e.name)) out.push(path);
  }
  return out;
}

let cached;
/** Every source file's relative imports that name another source file: Map<file, Set<file>>, built once a run. */
export function importGraph() {
  if (cached) return cached;
  const files = SCANNED.flatMap((d) => walk(d, []));
  const known = new Set(files);
  cached = new Map();
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const targets = new Set();
    for (const m of text.matchAll(SPECIFIER)) {
      const target = resolveSpecifier(file, m[1]);
      if (known.has(target) && target !== file) targets.add(target);
    }
    cached.set(file, targets);
  }
  return cached;
}

/** The layer of a file: the index of the longest matching path prefix in `layers` (entries are lists). */
export function layerOf(layers, file) {
  let best = { index: -1, length: -1, prefix: '' };
  layers.forEach((entries, index) => {
    for (const prefix of entries.paths) {
      const matches = prefix.endsWith('/') ? file.startsWith(prefix) : file === prefix;
      if (matches && prefix.length > best.length) best = { index, length: prefix.length, prefix };
    }
  });
  return best.index < 0 ? undefined : { index: best.index, prefix: best.prefix };
}

/** A path of imports from `start` back to `goal`, or undefined. */
export function pathBetween(graph, start, goal) {
  const seen = new Set([start]);
  const stack = [[start, [start]]];
  while (stack.length > 0) {
    const [node, path] = stack.pop();
    for (const next of graph.get(node) ?? []) {
      if (next === goal) return [...path, next];
      if (!seen.has(next)) {
        seen.add(next);
        stack.push([next, [...path, next]]);
      }
    }
  }
  return undefined;
}

/** Calls `check(node, specifier)` for every relative import, re-export and dynamic import of a file. */
function eachSpecifier(check) {
  const literal = (node, source) => {
    if (source?.type === 'Literal' && typeof source.value === 'string' && /^\.{1,2}\//.test(source.value))
      check(node, source.value);
  };
  return {
    ImportDeclaration: (node) => literal(node, node.source),
    ExportNamedDeclaration: (node) => literal(node, node.source),
    ExportAllDeclaration: (node) => literal(node, node.source),
    ImportExpression: (node) => literal(node, node.source),
  };
}

const layers = {
  meta: {
    type: 'problem',
    docs: { description: 'an import may not go up the layering table (eslint.config.js LAYERS)' },
    schema: [{ type: 'object', properties: { layers: { type: 'array' } }, required: ['layers'] }],
    messages: {
      upward: '{{from}} ({{fromLayer}}) may not import {{to}} ({{toLayer}}): that layer sits above it. {{why}}',
      unlisted: '{{file}} is in no layer of eslint.config.js LAYERS: add its folder where it belongs',
    },
  },
  create(context) {
    const table = context.options[0].layers;
    const from = repoPath(context.filename);
    const mine = layerOf(table, from);
    if (mine === undefined) {
      return {
        Program: (node) => context.report({ node, messageId: 'unlisted', data: { file: from } }),
      };
    }
    return eachSpecifier((node, specifier) => {
      const to = resolveSpecifier(from, specifier);
      const theirs = layerOf(table, to);
      if (theirs === undefined || theirs.index <= mine.index) return;
      context.report({
        node,
        messageId: 'upward',
        data: { from, to, fromLayer: mine.prefix, toLayer: theirs.prefix, why: table[mine.index].why },
      });
    });
  },
};

const noCycle = {
  meta: {
    type: 'problem',
    docs: { description: 'no import cycles between modules, type-only imports included' },
    schema: [],
    messages: { cycle: 'import cycle: {{path}} (move the shared part into a module both can import)' },
  },
  create(context) {
    const from = repoPath(context.filename);
    const graph = importGraph();
    return eachSpecifier((node, specifier) => {
      const to = resolveSpecifier(from, specifier);
      if (!graph.has(to)) return;
      const back = pathBetween(graph, to, from);
      if (back) context.report({ node, messageId: 'cycle', data: { path: [from, ...back].join(' → ') } });
    });
  },
};

export default { rules: { layers, 'no-cycle': noCycle } };
