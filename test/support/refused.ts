/** The error a construction throws; fails the test when it throws nothing. */
export function refused(build: () => unknown): Error {
  try {
    build();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected construction to fail');
}
