package ctrlsim

import "context"

// gate passes op (its actor named by ctx) to the hooks' Gate when they
// implement Gater: the call may wait there until the explorer releases
// it, or be refused.
func (c *Client) gate(ctx context.Context, op *Op) error {
	op.Controller = c.name
	op.Actor = ActorOf(ctx)
	if g, ok := c.hooks.(Gater); ok {
		if err := g.Gate(op); err != nil {
			op.Err = err
			return err
		}
	}
	return nil
}
