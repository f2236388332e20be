// The part of des.js (which ships no types) that the PIN blocks use.
declare module 'des.js' {
  interface Cipher {
    update(data: ArrayLike<number>): number[];
    final(data?: ArrayLike<number>): number[];
  }
  const des: {
    EDE: { create(options: { type: 'encrypt' | 'decrypt'; key: ArrayLike<number>; padding?: boolean }): Cipher };
  };
  export default des;
}
