// @nestjs/throttler, when it is installed. `rolling-window-limiter/nestjs`
// serves @RateLimit and RollingWindowGuard, which need only Nest, beside the
// parts built on @nestjs/throttler (RollingWindowThrottlerGuard extends its
// ThrottlerGuard); a static import would make the whole entry fail to load
// without it. This file is CommonJS in both builds (a .cts file compiles to
// .cjs) so that `require`, synchronous, resolves the package from where the
// library is installed, in the ES module build too; @nestjs/throttler is
// itself CommonJS, so an application that imports it shares this copy.

import type * as Throttler from '@nestjs/throttler';

/** What the entry takes from @nestjs/throttler at run time. */
export type ThrottlerModule = Pick<typeof Throttler, 'ThrottlerGuard' | 'getOptionsToken' | 'getStorageToken'>;

/**
 * @nestjs/throttler's exports, or undefined when it is not installed. Any
 * other failure to load it (a dependency of it missing, an error in it) is
 * thrown as it is.
 */
export function loadThrottler(): ThrottlerModule | undefined {
  try {
    return require('@nestjs/throttler') as ThrottlerModule; // eslint-disable-line @typescript-eslint/no-require-imports -- loaded only when installed, see above
  } catch (error) {
    const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
    if (code === 'MODULE_NOT_FOUND' && typeof message === 'string' && message.includes("'@nestjs/throttler'")) return undefined;
    throw error;
  }
}
