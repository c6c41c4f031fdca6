import { expect } from 'chai';
import { substitute } from '../../src/runtime/urls';

describe('link URL placeholders', () => {
  it('fills each {name} from the values given', () => {
    expect(substitute('/onramp/in/{instance}/out', { instance: 'main' }, 'binding b')).to.equal('/onramp/in/main/out');
  });

  it("refuses a placeholder without a value, also one named like Object's members ({constructor} was filled with Object's source text)", () => {
    for (const name of ['port', 'constructor', 'toString', '__proto__']) {
      expect(() => substitute(`/onramp/in/{${name}}`, { instance: 'main' }, 'binding b'), name).to.throw(
        `binding b: no value for placeholder {${name}} in '/onramp/in/{${name}}'`,
      );
    }
  });
});
