// Lint: ESLint's and typescript-eslint's recommended rules, type-aware, over
// the library, its tests, examples and scripts; and the layers of src/ (see
// docs/architecture.md): each imports only the layers below it,
//
//   errors <- core <- { stores/memory, redis, resilience } <- options <- limiters <- http <- integrations
//
// so that a wrong import fails `npm run lint`. integrations/ (the NestJS
// entry) is the top floor: it may import any layer, and nothing imports it.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The folders of src/ in layer order, each with the folders it must not import. */
const LAYERS = [
  { folder: 'errors', above: ['core', 'stores', 'redis', 'resilience', 'options', 'limiters', 'http', 'integrations'] },
  { folder: 'core', above: ['stores', 'redis', 'resilience', 'options', 'limiters', 'http', 'integrations'] },
  { folder: 'stores', above: ['redis', 'resilience', 'options', 'limiters', 'http', 'integrations'] },
  { folder: 'redis', above: ['stores', 'resilience', 'options', 'limiters', 'http', 'integrations'] },
  { folder: 'resilience', above: ['stores', 'redis', 'options', 'limiters', 'http', 'integrations'] },
  { folder: 'options', above: ['limiters', 'http', 'integrations'] },
  { folder: 'limiters', above: ['http', 'integrations'] },
  { folder: 'http', above: ['integrations'] },
];

const upTo = (folders) => `^(\\.\\./)+(${folders.join('|')})/|^(\\.\\./)+index\\.js$`;

/** The rule for one layer: an import that reaches a folder above it (or beside it) is an error naming the rule. */
function layerRule({ folder, above }) {
  const message = `src/${folder}/ may import only the layers below it (docs/architecture.md): errors <- core <- { stores/memory, redis, resilience } <- options <- limiters <- http <- integrations.`;
  // The one exception, type-only: an error of errors/ carries a decision's info, a type of the core (RateLimitedError).
  const typeOnly = folder === 'errors' ? ['core'] : [];
  const patterns = [{ regex: upTo(above.filter((name) => !typeOnly.includes(name))), message }];
  if (typeOnly.length > 0) patterns.push({ regex: upTo(typeOnly), message, allowTypeImports: true });
  return { files: [`src/${folder}/**/*.ts`], rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns }] } };
}

export default tseslint.config(
  { ignores: ['dist/', 'docs/api/', 'node_modules/', 'coverage/', 'bench/results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['*.js', 'scripts/*.mjs', 'test/support/*.cjs'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['**/*.cjs', 'scripts/**/*.mjs'],
    languageOptions: {
      globals: {
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
      },
    },
  },
  ...LAYERS.map(layerRule),
  {
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-expressions': 'off',
      '@typescript-eslint/no-floating-promises': 'error',
    },
  },
);
