/** Rules of a run whose agent is an external program (config `agent`); each error names the field to change. */
import type { ChatFormat } from '../agent/chat-format.ts';
import { ConfigError } from '../errors.ts';
import type { RlConfig } from './config-fields.ts';

type AgentSettings = Pick<RlConfig, 'agent' | 'model' | 'sftSteps' | 'tools' | 'toolReward'>;

export function validateAgentConfig(c: AgentSettings): void {
  if (c.agent === '') return;
  if (c.model === '') {
    throw new ConfigError('model', "an agent's calls are served through a model's chat template: set model (--model)");
  }
  if (c.sftSteps > 0) throw new ConfigError('sftSteps', 'the warm-start plays a built-in environment; set sftSteps=0');
  if (c.tools !== 'none') throw new ConfigError('tools', 'an agent runs its own tools; set tools=none');
  if (c.toolReward !== 'env')
    throw new ConfigError('toolReward', 'an agent reports its own reward; set toolReward=env');
}

/** An agent run's model must bring its own Jinja chat template: the gateway renders tools and tool results with it. */
export function checkAgentChat(c: Pick<RlConfig, 'agent' | 'model'>, chat: ChatFormat): void {
  if (c.agent !== '' && !chat.jinja) {
    throw new ConfigError(
      'model',
      `${c.model} has no chat template (tokenizer_config.json chat_template or ` +
        'chat_template.jinja), which the agent gateway renders with',
    );
  }
}
