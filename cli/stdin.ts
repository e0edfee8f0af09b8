// Standard input's bytes, whole: `emq enqueue`'s payload, `emq schedule put`'s template.
export async function readStdin(): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
