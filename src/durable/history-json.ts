/**
 * Workflow histories as JSON (the format `temporal workflow show --output json` writes) and back, for
 * the committed replay fixtures. The SDK's own historyToJSON/historyFromJSON fail in this install: npm
 * keeps three copies of protobufjs under @temporalio/*, and @temporalio/common's JSON codec rejects the
 * types @temporalio/proto built with another copy ("type must be a Type"). Resolving protobufjs from
 * @temporalio/proto's own location uses the copy its types come from, whatever the layout.
 */
import { createRequire } from 'node:module';
import type { temporal } from '@temporalio/proto';

type History = temporal.api.history.v1.IHistory;
interface ProtoJson {
  toJson(type: unknown, message: unknown): unknown;
  fromJson(type: unknown, json: unknown, options?: { ignoreUnknownFields?: boolean }): History;
}

const fromHere = createRequire(import.meta.url);
const fromProto = createRequire(fromHere.resolve('@temporalio/proto'));
const protojson = fromProto('protobufjs/ext/protojson') as ProtoJson;
const proto = fromProto('@temporalio/proto') as typeof import('@temporalio/proto');
const { patchProtobufRoot } = fromProto('@temporalio/proto/lib/patch-protobuf-root') as {
  patchProtobufRoot: (root: unknown) => { lookupType(name: string): unknown };
};
const historyType = patchProtobufRoot(proto).lookupType('temporal.api.history.v1.History');

export function historyToJSON(history: History): string {
  const message = proto.temporal.api.history.v1.History.fromObject(history);
  return `${JSON.stringify(protojson.toJson(historyType, message), null, 2)}\n`;
}

/** A History message the replayer accepts as is (it only converts JSON with its own, broken, codec). */
export function historyFromJSON(json: unknown): History {
  return protojson.fromJson(historyType, json, { ignoreUnknownFields: true });
}
