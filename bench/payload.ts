// The job every phase enqueues: a small JSON document, about 100 bytes once serialized.

export interface OrderEvent {
  n: number;
  event: string;
  customer: string;
  amount: number;
  currency: string;
  ref: string;
}

export function payloadOf(n: number): OrderEvent {
  return { n, event: 'order.created', customer: 'cus_8f3a2b1c', amount: 4200, currency: 'EUR', ref: 'inv-000042' };
}
