import { ORDER_LIFECYCLE } from '../order/transitions';
import { RUN_LIFECYCLE } from '../session/transitions';
import { IMAGE_TASK_LIFECYCLE } from '../image-task/transitions';

describe('actor lifecycles', () => {
  it('when a move is in the table, then it leads where the table says', () => {
    expect(ORDER_LIFECYCLE.move('paid', 'fulfil')).toBe('fulfilled');
    expect(RUN_LIFECYCLE.move('new', 'start')).toBe('running');
    expect(IMAGE_TASK_LIFECYCLE.move('running', 'deadline')).toBe('unknown');
  });

  it('when a move is not in the table, then it is refused with the actor\'s own conflict', () => {
    expect(() => ORDER_LIFECYCLE.move('fulfilled', 'succeed')).toThrow(expect.objectContaining({ code: 'order_state_conflict' }));
    expect(() => RUN_LIFECYCLE.move('completed', 'output')).toThrow(expect.objectContaining({ code: 'run_not_active' }));
    expect(() => IMAGE_TASK_LIFECYCLE.move('succeeded', 'settle')).toThrow(expect.objectContaining({ code: 'task_state_conflict' }));
  });
});
