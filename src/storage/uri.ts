/**
 * References passed between activities: `s3://bucket/key` (key verbatim, as the AWS CLI writes it)
 * and `file:///absolute/path` (percent-encoded as RFC 8089 / Node's URL does).
 */
import { isAbsolute } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { StarpoError } from '../errors.ts';

export type StorageLocation = { scheme: 's3'; bucket: string; key: string } | { scheme: 'file'; path: string };

const PARSERS: Record<string, (uri: string) => StorageLocation> = {
  's3:': (uri) => {
    const rest = uri.slice('s3://'.length);
    const slash = rest.indexOf('/');
    const bucket = slash < 0 ? rest : rest.slice(0, slash);
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
      throw invalid(uri, `bucket "${bucket}" is not a valid S3 bucket name`);
    }
    return { scheme: 's3', bucket, key: slash < 0 ? '' : rest.slice(slash + 1) };
  },
  'file:': (uri) => ({ scheme: 'file', path: fileURLToPath(uri) }),
};

function invalid(uri: string, why: string): StarpoError {
  return new StarpoError(`storage URI ${JSON.stringify(uri)}: ${why}`, { details: { uri } });
}

export function parseStorageUri(uri: string): StorageLocation {
  const scheme = /^[a-z][a-z0-9+.-]*:/.exec(uri)?.[0];
  const parse = scheme === undefined ? undefined : PARSERS[scheme];
  if (parse === undefined) throw invalid(uri, 'expected s3://bucket/key or file:///path');
  if (!uri.startsWith(`${scheme}//`)) throw invalid(uri, `expected ${scheme}//`);
  return parse(uri);
}

export function formatStorageUri(location: StorageLocation): string {
  if (location.scheme === 's3') return `s3://${location.bucket}/${location.key}`;
  if (!isAbsolute(location.path)) throw invalid(location.path, 'file URIs need an absolute path');
  const url = pathToFileURL(location.path).href;
  return location.path.endsWith('/') && !url.endsWith('/') ? `${url}/` : url;
}
