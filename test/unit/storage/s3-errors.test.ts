import assert from 'node:assert/strict';
import { test } from 'node:test';
import { retryableS3Failure } from '../../../src/storage/s3-store.ts';

/** An error shaped like the AWS SDK's: a name and, when a reply came, its HTTP status (message: the name). */
const sdkError = (name: string, status?: number, message = name): Error =>
  Object.assign(new Error(message), {
    name,
    ...(status === undefined ? {} : { $metadata: { httpStatusCode: status } }),
  });

test('S3 failures: network, 5xx, throttling, conflicts and unparseable replies are retried; configuration errors are not', () => {
  const retried = [
    sdkError('TimeoutError'), // no reply at all
    sdkError('InternalError', 500),
    sdkError('ServiceUnavailable', 503),
    sdkError('SlowDown', 429),
    sdkError('RequestTimeout', 408),
    sdkError('OperationAborted', 409),
    sdkError('UnknownError', 200), // a 200 whose body broke off: S3 stopping in the middle of a save
    sdkError('UnknownError', 400), // an error reply the SDK could not parse
    sdkError('400', 400, 'UnknownError'), // the same, named by its status (no code in the reply)
    new Error('socket hang up'),
  ];
  for (const e of retried) assert.equal(retryableS3Failure(e), true, `${e.name} ${JSON.stringify(e)}`);
  for (const e of [sdkError('AccessDenied', 403), sdkError('NoSuchBucket', 404), sdkError('InvalidArgument', 400)]) {
    assert.equal(retryableS3Failure(e), false, e.name);
  }
});
