export * from './caps';
export * from './plan';
export * from './run';
export * from './instrument';
