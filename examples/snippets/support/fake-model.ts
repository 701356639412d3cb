// A stand-in for an LLM provider and its tokenizer, for the snippets on costs: a token is a word, and an answer
// uses 300 tokens, or all it may when the prompt asks for a story.

/** What the provider reports for one call. */
export interface ModelReply {
  readonly text: string;
  readonly usage: { readonly totalTokens: number };
}

/** The tokens of a prompt: here, its words. */
export function countTokens(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/** Answers `prompt` in at most `maxTokens` tokens, and reports what the call used (the prompt's tokens and the answer's). */
export async function callModel(prompt: string, maxTokens: number): Promise<ModelReply> {
  const answerTokens = /story/i.test(prompt) ? maxTokens : Math.min(300, maxTokens);
  return { text: `(${answerTokens} tokens)`, usage: { totalTokens: countTokens(prompt) + answerTokens } };
}
