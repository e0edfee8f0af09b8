// An HTTP answer read whole: status, headers, text, and the JSON it holds (if it is JSON).
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  // any: tests read fields of whatever JSON came back and assert on them
  // biome-ignore lint/suspicious/noExplicitAny: tests read fields of whatever JSON came back
  json: any;
}

export async function answerOf(res: Response): Promise<Answer> {
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}
