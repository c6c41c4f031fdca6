// The lint gate (npm run lint, enforced by .ci/run): typescript-eslint's type-aware strict and stylistic rules over
// every TypeScript file, and a reason on every disable comment. Formatting is prettier's (.prettierrc.json).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import comments from '@eslint-community/eslint-plugin-eslint-comments/configs';

export default tseslint.config(
  // built output, the console's browser code (plain JS served as is), and the JS build scripts
  { ignores: ['dist/**', 'node_modules/**', 'ui/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  ...tseslint.configs.stylisticTypeChecked,
  comments.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // a disable comment says why: `// eslint-disable-line rule -- the reason`
      '@eslint-community/eslint-comments/require-description': 'error',
      '@eslint-community/eslint-comments/no-unused-disable': 'error',
      // `_name` marks a parameter a signature needs but the body does not use
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // counts and sizes in messages read as they are
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      // `() => void x` and arrow bodies returning a void call are how RxJS callbacks are written
      '@typescript-eslint/no-confusing-void-expression': 'off',
    },
  },
  {
    files: ['test/**/*.ts', 'marble-tests/**/*.ts', 'bench/**/*.ts'],
    rules: {
      // tests read JSON answers and events as they come (any), and poke at them: that is what they check
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      // chai's property assertions (expect(x).to.be.true) are expressions
      '@typescript-eslint/no-unused-expressions': 'off',
      // mocha hooks and fakes implement async interfaces without awaiting
      '@typescript-eslint/require-await': 'off',
      // a test asserts what it found: `x!` after an expect that it exists, and conditions on values the types call certain
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unnecessary-condition': 'off',
    },
  },
);
