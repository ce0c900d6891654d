export * from './f16';
export * from './xorshift';
export * from './nearestInt';
export * from './q8';
export * from './q4k';
export * from './gen';
export * from './gguf';
