export * from './caps';
export * from './plan';
export * from './runner';
export * from './timing';
export * from './instrument';
