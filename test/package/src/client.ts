// A user's script: the typed client against a running producer. Prints what it was answered.
import { createProducerClient } from 'echomq-edge/client';

const queue = process.env.QUEUE!;
const producer = createProducerClient({ url: process.env.PRODUCER_URL!, token: process.env.PRODUCER_TOKEN! });
const job = await producer.enqueue(queue, new Uint8Array([0x00, 0xff, 0x7b]));
const status = await producer.status(queue, job.id);
const batch = await producer.enqueueMany(queue, [{ payload: 'now' }, { payload: 'later', delay: '1h' }]);
console.log(JSON.stringify({ job, status, batch }));
