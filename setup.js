// Registers the cdktf matchers (toHaveResource, toHaveResourceWithProperties, …) for jest.
const cdktf = require("cdktf");
cdktf.Testing.setupJest();
