// The typed client's types held to the OpenAPI document's schemas, as generated into
// support/openapi-types.ts (test/openapi.test.ts fails when that file is stale). These are
// checked by the compiler: `npm run typecheck` fails when a response's properties or their
// types and the client's types part ways; vitest runs the same assertions at run time as no-ops.
import { expectTypeOf, it } from 'vitest';
import type { EnqueueResult, FlowRequest, FlowResponse, PlacementOptions, ProducerClient } from '../client/index.js';
import type * as Api from './support/openapi-types.js';

type Keys<T> = keyof T & string;
/** A wire job's fields, less the base64 spelling of a payload the client sends as `payload: Uint8Array`. */
type ClientKeys<T> = Exclude<Keys<T>, 'payloadBase64'>;

it("the client's results are the document's response bodies", () => {
  expectTypeOf<Api.Enqueued>().toEqualTypeOf<EnqueueResult>();
  expectTypeOf<Api.FlowResult>().toEqualTypeOf<FlowResponse>();
  expectTypeOf<Api.BatchResult['results'][number]>().toEqualTypeOf<Awaited<ReturnType<ProducerClient['enqueueMany']>>[number]>();
  // status() types state as any string: every state the document names fits, and the keys are the same
  type Status = NonNullable<Awaited<ReturnType<ProducerClient['status']>>>;
  expectTypeOf<Api.JobStatus>().toExtend<Status>();
  expectTypeOf<Keys<Api.JobStatus>>().toEqualTypeOf<Keys<Status>>();
});

it("the client's inputs are the document's request bodies", () => {
  type Parent = FlowRequest['parent'];
  type Child = FlowRequest['children'][number];
  expectTypeOf<Keys<Api.Flow>>().toEqualTypeOf<Keys<FlowRequest>>();
  expectTypeOf<ClientKeys<Api.FlowJob>>().toEqualTypeOf<Keys<Parent>>();
  expectTypeOf<ClientKeys<Api.FlowChild>>().toEqualTypeOf<Keys<Child>>();
  expectTypeOf<Pick<Api.FlowChild, 'id' | 'queue' | 'onFailure'>>().toEqualTypeOf<Pick<Child, 'id' | 'queue' | 'onFailure'>>();
  // a batch item: the job's payload and id, and the placement the client turns into its fields
  type Job = Parameters<ProducerClient['enqueueMany']>[1][number];
  expectTypeOf<ClientKeys<Api.BatchItem>>().toEqualTypeOf<Keys<Job>>();
  expectTypeOf<Keys<PlacementOptions>>().toEqualTypeOf<Exclude<ClientKeys<Api.BatchItem>, 'payload' | 'id' | 'idempotencyKey'>>();
});
