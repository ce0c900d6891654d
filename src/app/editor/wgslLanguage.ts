// WGSL for Monaco: a Monarch tokenizer (keywords, types, attributes, builtins, numeric literals with
// their suffixes, nested block comments) and the bracket/comment configuration. Pure data; the e2e test
// checks the highlighting it produces in the real editor.
import type { languages } from 'monaco-editor';

export const WGSL_LANGUAGE_ID = 'wgsl';

export const WGSL_KEYWORDS = [
  'alias', 'break', 'case', 'const', 'const_assert', 'continue', 'continuing', 'default', 'diagnostic', 'discard',
  'else', 'enable', 'fn', 'for', 'if', 'let', 'loop', 'override', 'requires', 'return', 'struct', 'switch', 'var', 'while',
] as const;

export const WGSL_TYPES = [
  'bool', 'f16', 'f32', 'i32', 'u32', 'i8', 'u8', 'vec2', 'vec3', 'vec4', 'vec2f', 'vec3f', 'vec4f', 'vec2i', 'vec3i', 'vec4i',
  'vec2u', 'vec3u', 'vec4u', 'vec2h', 'vec3h', 'vec4h', 'mat2x2', 'mat2x3', 'mat2x4', 'mat3x2', 'mat3x3', 'mat3x4', 'mat4x2',
  'mat4x3', 'mat4x4', 'mat2x2f', 'mat3x3f', 'mat4x4f', 'array', 'atomic', 'ptr', 'sampler', 'texture_2d', 'texture_storage_2d',
  'subgroup_matrix_left', 'subgroup_matrix_right', 'subgroup_matrix_result',
] as const;

/** Address spaces, access modes and matrix layouts: the words inside var<...> and friends. */
export const WGSL_QUALIFIERS = ['function', 'private', 'workgroup', 'uniform', 'storage', 'read', 'write', 'read_write', 'row_major', 'col_major'] as const;

export const WGSL_BUILTINS = [
  'abs', 'all', 'any', 'arrayLength', 'atomicAdd', 'atomicAnd', 'atomicLoad', 'atomicMax', 'atomicMin', 'atomicOr',
  'atomicStore', 'atomicSub', 'atomicExchange', 'atomicXor', 'bitcast', 'ceil', 'clamp', 'countOneBits', 'dot',
  'dot4I8Packed', 'dot4U8Packed', 'exp', 'exp2', 'extractBits', 'floor', 'fma', 'fract', 'insertBits', 'log', 'log2',
  'max', 'min', 'mix', 'pack2x16float', 'pack4xI8', 'pack4xU8', 'pow', 'round', 'select', 'sign', 'sqrt', 'step',
  'storageBarrier', 'subgroupAdd', 'subgroupBroadcast', 'subgroupShuffle', 'subgroupMatrixLoad', 'subgroupMatrixStore',
  'subgroupMatrixMultiplyAccumulate', 'trunc', 'unpack2x16float', 'unpack4xI8', 'unpack4xU8', 'workgroupBarrier',
  'workgroupUniformLoad',
] as const;

/** The Monarch grammar. */
export const wgslMonarch: languages.IMonarchLanguage = {
  defaultToken: '',
  keywords: [...WGSL_KEYWORDS],
  typeKeywords: [...WGSL_TYPES],
  qualifiers: [...WGSL_QUALIFIERS],
  builtins: [...WGSL_BUILTINS],
  constants: ['true', 'false'],
  symbols: /[=><!~?:&|+\-*/^%]+/,
  tokenizer: {
    root: [
      [/@[a-zA-Z_]\w*/, 'annotation'],
      [
        /[a-zA-Z_]\w*/,
        {
          cases: {
            '@keywords': 'keyword',
            '@typeKeywords': 'type',
            '@qualifiers': 'keyword.modifier',
            '@builtins': 'predefined',
            '@constants': 'constant',
            '@default': 'identifier',
          },
        },
      ],
      { include: '@whitespace' },
      [/[{}()[\]]/, '@brackets'],
      [/[<>](?!@symbols)/, '@brackets'],
      [/@symbols/, 'operator'],
      [/0[xX][0-9a-fA-F]+[iuh]?/, 'number.hex'],
      [/(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?[fh]/, 'number.float'],
      [/(\d+\.\d*|\.\d+)([eE][+-]?\d+)?/, 'number.float'],
      [/\d+[eE][+-]?\d+/, 'number.float'],
      [/\d+[iu]?/, 'number'],
      [/[;,.]/, 'delimiter'],
    ],
    whitespace: [
      [/[ \t\r\n]+/, ''],
      [/\/\*/, 'comment', '@comment'],
      [/\/\/.*$/, 'comment'],
    ],
    // WGSL block comments nest.
    comment: [
      [/[^/*]+/, 'comment'],
      [/\/\*/, 'comment', '@push'],
      [/\*\//, 'comment', '@pop'],
      [/[/*]/, 'comment'],
    ],
  },
};

export const wgslConfiguration: languages.LanguageConfiguration = {
  comments: { lineComment: '//', blockComment: ['/*', '*/'] },
  brackets: [
    ['{', '}'],
    ['[', ']'],
    ['(', ')'],
  ],
  autoClosingPairs: [
    { open: '{', close: '}' },
    { open: '[', close: ']' },
    { open: '(', close: ')' },
  ],
  surroundingPairs: [
    { open: '{', close: '}' },
    { open: '[', close: ']' },
    { open: '(', close: ')' },
  ],
};
