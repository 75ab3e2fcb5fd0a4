import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatStorageUri, parseStorageUri } from '../../../src/storage/uri.ts';

test('an s3 URI splits into bucket and verbatim key', () => {
  assert.deepEqual(parseStorageUri('s3://ckpt-bucket/runs/r 1/model.bin'), {
    scheme: 's3',
    bucket: 'ckpt-bucket',
    key: 'runs/r 1/model.bin',
  });
  assert.equal(formatStorageUri({ scheme: 's3', bucket: 'ckpt-bucket', key: 'runs/a/' }), 's3://ckpt-bucket/runs/a/');
});

test('a file URI round-trips a path with spaces and keeps a trailing slash', () => {
  const uri = formatStorageUri({ scheme: 'file', path: '/data/my runs/r1/' });
  assert.equal(uri, 'file:///data/my%20runs/r1/');
  assert.deepEqual(parseStorageUri(uri), { scheme: 'file', path: '/data/my runs/r1/' });
});

test('unknown schemes, relative paths and bad bucket names are refused', () => {
  assert.throws(() => parseStorageUri('http://x/y'), /expected s3:\/\/bucket\/key or file:\/\/\/path/);
  assert.throws(() => parseStorageUri('s3://Bad_Bucket/k'), /not a valid S3 bucket name/);
  assert.throws(() => formatStorageUri({ scheme: 'file', path: 'relative/dir' }), /absolute path/);
});
